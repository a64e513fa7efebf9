import { defaultRoutes } from '@plone/volto/routes'
import config from '@plone/volto/registry'

const routes = [
  {
    path: '/',
    component: config.getComponent('App').component,
    routes: [...(config.addonRoutes || []), ...defaultRoutes],
  },
]

export default routes
