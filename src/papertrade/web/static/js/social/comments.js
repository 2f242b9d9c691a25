// The comment thread of a public portfolio or strategy page (docs/comments.md): newest first,
// one level of replies, a form to post or reply. Text is set as text (never HTML), exactly as
// it was written. The page holds the markup of templates/_comments.html.

import { get, post } from '../api.js';
import { h, $ } from '../dom.js';
import { onSubmit } from '../ui.js';

/** Show and wire the thread of `target`: { portfolio_id } or { strategy_id }. */
export function commentThread(target) {
  const [[key, id]] = Object.entries(target);
  const signedIn = Boolean(document.body.dataset.signedIn);
  let replyTo = null;
  // Signed out, the thread is readable (public pages are) and the form gives way to a sign-in
  // link that comes back here.
  $('#comment-form').hidden = !signedIn;
  $('#comment-sign-in').hidden = signedIn;

  function answer(comment) {
    replyTo = comment.id;
    $('#comment-label').textContent = `Reply to comment by ${comment.author_name || `trader${comment.user_id}`}`;
    $('#comment-unreply').hidden = false;
    $('#comment-text').focus();
  }

  function item(comment, top) {
    const text = comment.deleted ? h('em', { class: 'muted' }, 'deleted') : h('p', { class: 'pre-wrap' }, comment.text);
    const when = new Date(comment.created_at).toISOString().slice(0, 16).replace('T', ' ');
    return h('li', { class: 'comment', 'data-id': comment.id },
      h('p', { class: 'muted' },
        h('a', { href: `/u/${comment.user_id}`, class: 'comment-author' }, comment.author_name || `trader${comment.user_id}`),
        ` · ${when}${comment.edited_at ? ' · edited' : ''}`),
      text,
      top && signedIn && !comment.deleted ? h('button', { type: 'button', class: 'btn btn-small', onclick: () => answer(comment) }, 'Reply') : null,
      comment.replies.length ? h('ol', { class: 'replies' }, comment.replies.map((r) => item(r, false))) : null);
  }

  async function load() {
    try {
      const comments = await get(`/v1/comments?${key}=${id}`, { on401: 'throw' });
      $('#comment-list').replaceChildren(...comments.map((c) => item(c, true)));
      $('#comments-card').hidden = false;
    } catch {
      $('#comments-card').hidden = true; // not public (any more)
    }
  }

  $('#comment-unreply').addEventListener('click', () => {
    replyTo = null;
    $('#comment-label').textContent = 'Your comment';
    $('#comment-unreply').hidden = true;
  });

  onSubmit($('#comment-form'), async (data, form) => {
    const body = { [key]: id, text: String(data.get('text') || '') };
    if (replyTo !== null) body.parent_id = replyTo;
    await post('/v1/comments', body);
    form.reset();
    $('#comment-unreply').click();
    await load();
  });

  return load();
}
