// Calls to pilotfish's JSON API with the session's key; errors carry the server's message and
// HTTP status ({"error": code, "message": text} is the API's error shape).
export async function api(path, key, init = {}) {
  const headers = { ...(init.headers || {}) };
  if (key) headers.Authorization = `Bearer ${key}`;
  let res;
  try {
    res = await fetch(path, { ...init, headers });
  } catch (e) {
    const err = new Error(`pilotfish cannot be reached (${e.message})`);
    err.status = 0;
    throw err;
  }
  let body = null;
  try {
    body = await res.json();
  } catch {
    body = null;
  }
  if (!res.ok) {
    const err = new Error(body?.message || body?.error?.message || `HTTP ${res.status}`);
    err.status = res.status;
    throw err;
  }
  return body;
}

// What a chat failure says to the person: the server's message when the body is our error
// JSON, otherwise the network's.
export function describeChatError(error) {
  const text = String(error?.message || error || '');
  try {
    const body = JSON.parse(text);
    if (body?.message) return body.message;
  } catch {
    // not JSON: a network error or an error chunk's text
  }
  if (/fetch|network|terminated|load failed|aborted/i.test(text))
    return `The connection to pilotfish was lost (${text}). Retry when it is back.`;
  return text || 'The answer failed.';
}
