import 'semantic-ui-less/semantic.less'
import '@plone/volto/../theme/themes/pastanaga/extras/extras.less'
