/** The run's own calls to the service to set it up (never measured): JSON in, JSON out, errors thrown. */

const say = message => console.error(`[bench] ${message}`)

/**
 * A set-up request to the service. A request that failed before any answer
 * (a kept-alive connection the service closed as it was reused: on a loaded
 * machine the two keep-alive timers race) is sent once more on a new connection.
 */
export async function setUpFetch (url, init) {
  try {
    return await fetch(url, init)
  } catch (err) {
    if (!(err instanceof TypeError)) throw err
    say(`${init.method} ${url} failed before any answer (${err.cause?.code ?? err.cause?.message ?? err.message}); sending it once more`)
    return await fetch(url, init)
  }
}

/** A JSON call to the service. */
export async function call (baseUrl, method, path, body, token) {
  const res = await setUpFetch(baseUrl + path, {
    method,
    headers: { accept: 'application/json', 'content-type': 'application/json', ...(token !== undefined ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body)
  })
  const text = await res.text()
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`)
  return text === '' ? null : JSON.parse(text)
}

export async function login (baseUrl, credentials) {
  return (await call(baseUrl, 'POST', '/@login', credentials)).token
}
