// The source editor: CodeMirror 6 from npm, bundled by `make setup` (frontend/editor/) and
// served from /static/vendor. This module only adds what the pages share: where an error is.

export { createEditor } from '/static/vendor/papertrade-bundle/codemirror.mjs';

/**
 * The position in an `invalid_strategy_source` answer ("line 2:16: unexpected 'then', …"), or
 * null when the message names none.
 */
export function sourceErrorAt(message) {
  const found = /^line (\d+):(\d+):\s*(.*)$/s.exec(String(message || ''));
  if (!found) return null;
  return { line: Number(found[1]), column: Number(found[2]), message: found[3] };
}
