// Volto's own build configuration; the project has no theme of its own, so
// Semantic UI's theme.config is Volto's (Pastanaga) instead of ./theme/theme.config.
const path = require('path')
const volto = require('@plone/volto/razzle.config')

const voltoThemeConfig = path.join(
  path.dirname(require.resolve('@plone/volto/package.json')),
  'theme',
  'theme.config'
)

module.exports = {
  ...volto,
  modifyWebpackConfig: (args) => {
    const config = volto.modifyWebpackConfig(args)
    config.resolve.alias['../../theme.config$'] = voltoThemeConfig
    return config
  },
}
