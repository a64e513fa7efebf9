import React from 'react'
import { Container, Image, Label, Segment } from 'semantic-ui-react'
import {
  flattenHTMLToAppURL,
  flattenToAppURL,
} from '@plone/volto/helpers/Url/Url'

/**
 * The name shown as the speaker: the talk's own `speaker`, else its first
 * creator (a talk submitted through a client is presented by whoever submitted it).
 */
export function speakerOf (content) {
  return content.speaker || content.creators?.[0] || ''
}

/** The HTML of `details` when the talk has any, else null (then the description stands in). */
export function detailsHtmlOf (content) {
  const data = content.details?.data
  return data ? flattenHTMLToAppURL(data) : null
}

const TalkView = ({ content }) => {
  const speaker = speakerOf(content)
  const details = detailsHtmlOf(content)
  const audience = content.audience || []
  // Choices come back as tokens or as {token, title} terms, depending on the serialiser.
  const titleOf = (term) => (term && typeof term === 'object' ? term.title || term.token : term)
  const imageUrl = content.image?.scales?.preview?.download || content.image?.download
  return (
    <Container id='page-document' className='view-wrapper talk-view'>
      <h1 className='documentFirstHeading'>
        {content.type_of_talk && (
          <span className='talk-type'>{titleOf(content.type_of_talk)}: </span>
        )}
        {content.title}
      </h1>
      {details
        ? (
          <>
            {content.description && (
              <p className='documentDescription'>{content.description}</p>
            )}
            <div
              className='talk-details'
              dangerouslySetInnerHTML={{ __html: details }}
            />
          </>
          )
        : (
            content.description && (
              <p className='talk-details documentDescription'>{content.description}</p>
            )
          )}
      {audience.length > 0 && (
        <div className='talk-audience'>
          {audience.map((item) => (
            <Label key={titleOf(item)} color='teal'>
              {titleOf(item)}
            </Label>
          ))}
        </div>
      )}
      {content.room && (
        <p className='talk-room'>Room: {titleOf(content.room)}</p>
      )}
      {speaker && (
        <Segment clearing className='talk-speaker'>
          <h2>
            Speaker: <span className='talk-speaker-name'>{speaker}</span>
          </h2>
          {imageUrl && (
            <Image src={flattenToAppURL(imageUrl)} size='small' floated='right' alt='' />
          )}
          {content.email && (
            <p>
              <a href={`mailto:${content.email}`}>{content.email}</a>
            </p>
          )}
          {content.speaker_biography?.data && (
            <div
              className='talk-speaker-biography'
              dangerouslySetInnerHTML={{
                __html: flattenHTMLToAppURL(content.speaker_biography.data),
              }}
            />
          )}
        </Segment>
      )}
    </Container>
  )
}

export default TalkView
