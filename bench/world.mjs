/**
 * What the crowd of the varied traffic knows of the site before it asks
 * (bench/traffic-mix.mjs describes the world): every talk of /talks in
 * folder order with its owner and whether it is published, and the span of
 * the published talks' `effective` dates, read from the database itself;
 * the callers' tokens come from the run, which created the users.
 */
import pg from 'pg'

export async function loadWorld (databaseUrl, { admin, members, managers }) {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const { rows: talks } = await client.query(`SELECT c.path, c.owner, c.review_state = 'published' AS published FROM content c
      WHERE c.parent_uid = (SELECT uid FROM content WHERE path = '/talks') AND c.portal_type = 'talk' ORDER BY c.position`)
    const { rows: [span] } = await client.query(`SELECT extract(epoch FROM min((data->>'effective')::timestamptz)) * 1000 AS "from",
      extract(epoch FROM max((data->>'effective')::timestamptz)) * 1000 AS "to"
      FROM content WHERE portal_type = 'talk' AND review_state = 'published'`)
    if (talks.length === 0 || span.from === null) throw new Error('the varied traffic needs talks in /talks, some of them published')
    return {
      talks,
      effective: [Number(span.from), Number(span.to)],
      admin,
      members,
      managers
    }
  } finally {
    await client.end()
  }
}
