// The page-wide message line under the top bar (errors of actions, sign-in hints).
export function showNotice(message: string | null, kind: 'error' | 'info' = 'error'): void {
  const notice = document.getElementById('notice');
  if (!notice) return;
  notice.hidden = !message;
  notice.className = `notice ${kind}`;
  notice.textContent = message ?? '';
}
