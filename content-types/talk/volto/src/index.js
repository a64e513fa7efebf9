import TalkView from './TalkView'

/**
 * Volto add-on of the talks service: shows a talk as the service's contract
 * describes it. Registered for the `talk` type and for its `talkview` layout
 * (the layout the service sends), so either lookup of Volto's View finds it.
 */
export default function applyConfig (config) {
  config.views.contentTypesViews.talk = TalkView
  config.views.layoutViews.talkview = TalkView
  config.views.layoutViewsNamesMapping = {
    ...config.views.layoutViewsNamesMapping,
    talkview: 'Talk view',
  }
  return config
}
