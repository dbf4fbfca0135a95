// The API token: entered once, kept in sessionStorage (gone when the tab closes), and its role.
//
// The API has no "who am I" call, so the role is learned without changing anything: an empty
// POST /api/v1/campaigns is refused with 403 for a viewer token and with 400 (no body) for an
// admin one — authorization runs before the body is read. The UI hides mutating controls for
// viewers; the daemon refuses them anyway.
import { ApiError, api, probeStatus, setToken } from './api';

export type Role = 'admin' | 'viewer' | 'anonymous';

const STORAGE_KEY = 'colltune.token';

export interface Session {
  role: Role | null; // null: not signed in and the daemon refuses anonymous reads
  error: string | null;
}

export const session: Session = { role: null, error: null };

// Used only when sessionStorage is unavailable (e.g. disabled storage).
let memoryToken: string | null = null;

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(STORAGE_KEY) ?? memoryToken;
  } catch {
    return memoryToken;
  }
}

export function isAdmin(): boolean {
  return session.role === 'admin';
}

// Uses the stored token (or none) and learns its role. Returns the session.
export async function establish(): Promise<Session> {
  const token = storedToken();
  setToken(token);
  session.error = null;
  try {
    await api.version();
  } catch (e) {
    session.role = null;
    if (e instanceof ApiError && e.status === 401) {
      session.error = token ? 'The daemon refused this token.' : null;
      if (token) forget();
    } else {
      session.error = e instanceof Error ? e.message : String(e);
    }
    return session;
  }
  if (!token) {
    session.role = 'anonymous';
    return session;
  }
  const status = await probeStatus('/api/v1/campaigns');
  session.role = status === 403 ? 'viewer' : status === 400 ? 'admin' : 'viewer';
  return session;
}

export async function signIn(token: string): Promise<Session> {
  memoryToken = token.trim();
  try {
    sessionStorage.setItem(STORAGE_KEY, memoryToken);
  } catch {
    // Storage disabled: the token lives for this page only.
  }
  return establish();
}

export function forget(): void {
  memoryToken = null;
  try {
    sessionStorage.removeItem(STORAGE_KEY);
  } catch {
    // nothing stored
  }
  setToken(null);
}
