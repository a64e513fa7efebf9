import start from '@plone/volto/start-server'

start()
