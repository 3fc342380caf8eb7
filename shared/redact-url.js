// Connection URLs in logs and error messages: their passwords never are.

/**
 * A URL with its password replaced, safe for logs and error messages.
 * @param {string} value
 */
export function redactUrl(value) {
  try {
    const url = new URL(value);
    if (url.password) url.password = '***';
    return url.toString().replace(/\/$/, value.endsWith('/') ? '/' : '');
  } catch {
    return value.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@');
  }
}
