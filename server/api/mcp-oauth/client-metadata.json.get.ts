/**
 * This app's OAuth client ID metadata document: authorization servers that take a URL as the
 * client id (`client_id_metadata_document_supported`) read it instead of having the app register.
 * Public (the authorization server fetches it); it names only the app and its callback. An MCP
 * server uses it when its `oauth.clientMetadataUrl` is this address.
 */
export default defineEventHandler((event) => {
  setResponseHeader(event, 'cache-control', 'public, max-age=3600')
  return useToolSources().authorizations.clientMetadataDocument(event.context.site.appOrigin)
})
