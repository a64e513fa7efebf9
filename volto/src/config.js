// The project configures nothing itself: Volto's defaults plus the add-ons
// named in package.json (`addons`), as an operator's project would be.
import '@plone/volto/config'

export default function applyConfig (config) {
  return config
}
