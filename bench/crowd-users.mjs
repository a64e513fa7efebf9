/**
 * The logged-in callers of the varied traffic, created through `@users` and
 * logged in once per run (a token lasts JWT_TTL, 12 hours by default):
 * `MEMBERS` Members — the seeded talks' owners among them (bench/talks.mjs,
 * `speakerOf`), so that some read their own private talks and edit their own
 * — and a few Managers. Each user costs two password hashes, which a process
 * of the service computes one at a time: the users are spread over its
 * processes.
 */
import { SPEAKERS, speakerOf } from './talks.mjs'
import { call, login } from './setup-calls.mjs'

export const MEMBERS = 200
export const MANAGERS = 5
/** Users being created or logged in at once, over all the processes. */
const AT_ONCE = 4

const passwordOf = username => `${username}-crowd-password`

async function userToken (url, adminToken, username, roles) {
  await call(url, 'POST', '/@users', { username, email: `${username}@example.org`, password: passwordOf(username), roles }, adminToken)
  return await login(url, { login: username, password: passwordOf(username) })
}

/** Members and Managers with their tokens: `{ members: [{login, token}], managers: [token] }`. */
export async function createCrowdUsers (urls, adminToken) {
  const wanted = [
    ...Array.from({ length: MEMBERS }, (_, i) => ({ username: i < SPEAKERS ? speakerOf(i) : `member-${i}`, roles: ['Member'] })),
    ...Array.from({ length: MANAGERS }, (_, i) => ({ username: `manager-${i}`, roles: ['Manager'] }))
  ]
  const tokens = new Array(wanted.length)
  let next = 0
  const worker = async () => {
    for (let i = next++; i < wanted.length; i = next++) tokens[i] = await userToken(urls[i % urls.length], adminToken, wanted[i].username, wanted[i].roles)
  }
  await Promise.all(Array.from({ length: AT_ONCE }, worker))
  return {
    members: wanted.slice(0, MEMBERS).map((user, i) => ({ login: user.username, token: tokens[i] })),
    managers: tokens.slice(MEMBERS)
  }
}
