/**
 * The task page's one script, sent inline with the page's CSP nonce. It
 * reads the live route at the task's poll interval and updates the page:
 * status, message, the time of the last change, which question forms still
 * show, the cancel button, and the result or error once the task ends. Task
 * data only ever reaches the page as `textContent` or as the attributes the
 * server already checked (`href` of `http(s)` links, `src` of `data:` media):
 * no HTML is parsed. A question the page does not show yet reloads the page
 * (its form is the server's to build), unless the person is typing in a form.
 *
 * Plain ES2020, no framework; written as a string because the page inlines it.
 */
export const LIVE_SCRIPT = `(() => {
  const root = document.getElementById('task');
  if (!root) return;
  const shown = JSON.parse(root.dataset.questions || '[]');
  const byId = (id) => document.getElementById(id);
  const setText = (id, value) => { const el = byId(id); if (el) el.textContent = value; };
  let typing = false;
  document.addEventListener('input', () => { typing = true; });
  const block = (b) => {
    if (b.kind === 'image') { const img = document.createElement('img'); img.src = b.src; img.alt = b.alt; return img; }
    if (b.kind === 'audio') { const audio = document.createElement('audio'); audio.controls = true; audio.src = b.src; return audio; }
    if (b.kind === 'link' && b.href) {
      const a = document.createElement('a'); a.href = b.href; a.rel = 'noopener noreferrer nofollow'; a.textContent = b.text;
      const p = document.createElement('p'); p.append(a); return p;
    }
    if (b.kind === 'link') { const p = document.createElement('p'); p.textContent = b.text + ' (' + b.target + ')'; return p; }
    if (b.kind === 'json') {
      const figure = document.createElement('figure'); const caption = document.createElement('figcaption'); const pre = document.createElement('pre');
      caption.textContent = b.label; pre.textContent = b.text; figure.append(caption, pre); return figure;
    }
    const pre = document.createElement('pre'); pre.textContent = b.text; return pre;
  };
  const show = (view) => {
    root.dataset.status = view.status;
    setText('status', view.status);
    setText('status-message', view.statusMessage || '');
    setText('updated', view.lastUpdatedAt);
    for (const section of document.querySelectorAll('[data-question]')) section.hidden = !view.questions.includes(section.dataset.question);
    const waiting = byId('questions'); if (waiting) waiting.hidden = view.questions.length === 0;
    if (view.questions.some((key) => !shown.includes(key))) {
      if (!typing) { location.reload(); return false; }
      byId('notice').hidden = false;
    }
    const ended = view.status === 'completed' || view.status === 'failed' || view.status === 'cancelled';
    const cancel = byId('cancel'); if (cancel) cancel.hidden = ended || view.cancelRequested;
    setText('cancel-state', view.cancelRequested ? 'Cancellation requested: the task stops at its next check.' : '');
    const result = byId('result');
    if (view.result && result && result.dataset.filled !== 'yes') {
      result.replaceChildren(...view.result.blocks.map(block));
      result.dataset.filled = 'yes';
      byId('result-error').hidden = !view.result.isError;
      byId('outcome').hidden = false;
    }
    if (view.error) { setText('failure-message', view.error.message); byId('failure').hidden = false; }
    return !ended;
  };
  const tick = async () => {
    let next = Number(root.dataset.poll) || 1000;
    try {
      const response = await fetch(root.dataset.live, { headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
      if (response.status === 401) { setText('live-state', 'Your session ended: reload the page to sign in again.'); return; }
      if (response.status === 404) { setText('live-state', 'This task is gone.'); return; }
      if (!response.ok) throw new Error('HTTP ' + response.status);
      const view = await response.json();
      setText('live-state', '');
      if (!show(view)) return;
      next = view.pollIntervalMs;
    } catch (error) {
      setText('live-state', 'Updates paused: the server could not be reached; trying again.');
    }
    setTimeout(tick, next);
  };
  if (root.dataset.status !== 'completed' && root.dataset.status !== 'failed' && root.dataset.status !== 'cancelled') setTimeout(tick, Number(root.dataset.poll) || 1000);
})();`;
