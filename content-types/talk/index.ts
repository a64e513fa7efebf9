import Type from 'typebox'
import { defineContentType } from '../../core/content/declaration.js'
import { Permission } from '../../core/security/roles.js'
import { dublinCore } from '../../schemas/dublincore.js'
import { eventBasic } from '../../schemas/event.js'
import { Choice, Image, MultiChoice, RichText, TextLine } from '../../schemas/fields.js'
import { lightningTalkIsShort } from './rules.js'
import { versioning } from '../../schemas/versioning.js'

/**
 * The conference talk of the Mastering Plone training (its REST chapter),
 * with the limits of the contract (docs/api.md).
 */
export default defineContentType({
  name: 'talk',
  title: 'Talk',
  description: 'A talk, training, keynote or lightning talk submitted to the conference.',
  folderish: false,
  behaviors: [dublinCore, eventBasic, versioning],
  schema: Type.Object({
    type_of_talk: Choice({ title: 'Type of talk', vocabulary: 'types_of_talk', index: 'field' }),
    details: Type.Optional(RichText({
      title: 'Details', description: 'Description of the talk (max. 2000 characters)', maxTextLength: 2000, searchable: true
    })),
    audience: MultiChoice({ title: 'Audience', vocabulary: 'audiences', minItems: 1, index: 'keyword' }),
    room: Type.Optional(Choice({ title: 'Room', vocabulary: 'rooms', index: 'field', writePermission: Permission.Review })),
    speaker: Type.Optional(TextLine({
      title: 'Speaker', description: 'Name (or names) of the speaker', maxLength: 512, index: 'field', searchable: true
    })),
    email: Type.Optional(Type.String({ title: 'Email', description: 'E-mail address of the speaker', format: 'email', maxLength: 254 })),
    image: Type.Optional(Image({ title: 'Image', description: 'Portrait of the speaker' })),
    speaker_biography: Type.Optional(RichText({ title: 'Speaker Biography (max. 1000 characters)', maxTextLength: 1000 }))
  }),
  invariants: [lightningTalkIsShort],
  vocabularies: {
    types_of_talk: {
      title: 'Types of talk',
      terms: ['Talk', 'Training', 'Keynote', 'Lightning Talk'].map(token => ({ token, title: token }))
    },
    audiences: {
      title: 'Audiences',
      terms: ['Beginner', 'Advanced', 'Professionals'].map(token => ({ token, title: token }))
    },
    rooms: {
      title: 'Rooms',
      terms: ['101', '201', 'Auditorium'].map(token => ({ token, title: token })),
      editable: true
    }
  },
  layout: 'talkview',
  // Logged-in users are Contributors in `talks`: they may submit talks ("authenticated clients can create talks").
  container: { id: 'talks', title: 'Talks', type: 'folder', localRoles: { Authenticated: ['Contributor'] } }
})
