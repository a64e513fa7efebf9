// Types of bench/talks.mjs for the TypeScript tests that use it.

export const WORDS: string[]
export const SUBJECTS: string[]
export const SPEAKERS: number
export function speakerOf (n: number): string
export function seededRandom (seed: number): () => number
export const WORD_IN_EVERY_TALK: string
export const WORD_IN_TENTH_OF_TALKS: string
export interface TalkBody {
  '@type': 'talk'
  title: string
  description: string
  type_of_talk: string
  details: { data: string, 'content-type': string }
  audience: string[]
  speaker: string
  email: string
  subjects: string[]
  start: string
  end: string
}
export function talkBody (n: number, label?: string): TalkBody
export const COMMON_SUBJECT: string
export const FIRST_DAY: [string, string]
export const FULL_TEXT_QUERIES: string[]
