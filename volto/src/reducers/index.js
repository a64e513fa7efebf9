import defaultReducers from '@plone/volto/reducers'

export default { ...defaultReducers }
