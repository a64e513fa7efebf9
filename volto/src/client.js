import client from '@plone/volto/start-client'

client()
