/**
 * Plain words for what can end an OAuth 2.0 linking flow: the provider's error codes (RFC 6749 §4.1.2.1 at the
 * authorization, §5.2 at the token endpoint) and Patchbay's own callback codes. The end user reads these; the
 * code itself is shown beside them only as a reference for support.
 */
export function plainProviderError(code: string, appName: string): string {
  switch (code) {
    case 'access_denied':
      return 'You declined access, so nothing was linked.';
    case 'invalid_request':
      return `${appName} could not handle the sign-in request it was sent, so nothing was linked. Try again; if it keeps happening, tell the app's support.`;
    case 'unauthorized_client':
    case 'unsupported_response_type':
    case 'unsupported_grant_type':
      return `${appName} does not allow this app to ask for access this way, so nothing was linked. The app's support can fix its settings.`;
    case 'invalid_scope':
      return `${appName} does not recognise the permissions that were asked for, so nothing was linked. The app's support can fix its settings.`;
    case 'server_error':
      return `${appName} had a problem on its side, so nothing was linked. Try again in a moment.`;
    case 'temporarily_unavailable':
      return `${appName} is busy or down for maintenance, so nothing was linked. Try again later.`;
    case 'invalid_client':
      return `${appName} did not recognise this app, so nothing was linked. The app's support can fix its settings.`;
    case 'invalid_grant':
    case 'token_error':
      return `${appName} did not accept the sign-in when it was being finished, so nothing was linked. Start again.`;
    case 'token_endpoint_error':
      return `${appName} could not be reached to finish the sign-in, so nothing was linked. Try again later.`;
    case 'invalid_state':
      return 'This sign-in is unknown or was already used, so nothing was linked. Start again from the app.';
    case 'expired_state':
      return 'This sign-in took longer than 10 minutes, so nothing was linked. Start again from the app.';
    case 'missing_code':
      return `${appName} sent you back without an answer, so nothing was linked. Start again.`;
    case 'configuration_changed':
      return 'The settings of this app changed while you were signing in, so nothing was linked. Start again.';
    default:
      return `${appName} did not complete the sign-in, so nothing was linked. Try again.`;
  }
}
