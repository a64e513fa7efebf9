import type { Invariant } from '../../core/content/declaration.js'

/** A lightning talk lasts at most five minutes (when both start and end are set). */
export const LIGHTNING_TALK_MAX_MINUTES = 5

export const lightningTalkIsShort: Invariant = data => {
  if (data.type_of_talk !== 'Lightning Talk') return []
  if (typeof data.start !== 'string' || typeof data.end !== 'string') return []
  const minutes = (Date.parse(data.end) - Date.parse(data.start)) / 60000
  return minutes > LIGHTNING_TALK_MAX_MINUTES
    ? [{ field: 'end', message: `A lightning talk lasts at most ${LIGHTNING_TALK_MAX_MINUTES} minutes.`, error: 'ValidationError' }]
    : []
}
