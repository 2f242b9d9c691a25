// The strategy editor: CodeMirror 6 (npm, pinned in package.json) bundled by esbuild into one ES
// module that the app serves from /static/vendor/papertrade-bundle/ (see `make setup`). This
// file is ours; everything it imports is the pinned packages. The page code
// (web/static/js/strategy/editor.js) only calls `createEditor`.

import { EditorState, Compartment } from '@codemirror/state';
import {
  EditorView,
  keymap,
  lineNumbers,
  highlightActiveLine,
  highlightActiveLineGutter,
  drawSelection,
} from '@codemirror/view';
import { defaultKeymap, history, historyKeymap, indentWithTab } from '@codemirror/commands';
import {
  StreamLanguage,
  HighlightStyle,
  syntaxHighlighting,
  bracketMatching,
  indentOnInput,
} from '@codemirror/language';
import { python } from '@codemirror/lang-python';
import { linter, lintGutter, setDiagnostics } from '@codemirror/lint';
import { tags as t } from '@lezer/highlight';

// The DSL's words (docs/strategies.md): settings, rule keywords, indicators, actions.
const SETTINGS = new Set(['symbol', 'timeframe', 'leverage', 'size', 'stop_loss', 'take_profit', 'trailing_stop']);
const KEYWORDS = new Set(['when', 'then', 'and', 'or', 'not', 'crosses', 'above', 'below']);
const ACTIONS = new Set(['buy', 'sell', 'long', 'short', 'close', 'all']);
const SERIES = new Set(['open', 'high', 'low', 'close', 'volume', 'price']);
const UNITS = new Set(['usdt', 'qty']);

/** A small tokenizer for the strategy DSL (the server's lark grammar is the authority). */
const dsl = StreamLanguage.define({
  name: 'papertrade-dsl',
  startState: () => ({ afterThen: false }),
  token(stream, state) {
    if (stream.sol()) state.afterThen = false;
    if (stream.eatSpace()) return null;
    if (stream.match('#')) {
      stream.skipToEnd();
      return 'comment';
    }
    if (stream.match(/^\d+(\.\d+)?%?/)) return 'number';
    if (stream.match(/^(<=|>=|==|!=|<|>|\+|-|\*|\/)/)) return 'operator';
    if (stream.match(/^[(),]/)) return 'punctuation';
    const word = stream.match(/^[A-Za-z_][A-Za-z0-9_.]*/);
    if (word) {
      const w = word[0].toLowerCase();
      if (w === 'then') state.afterThen = true;
      if (KEYWORDS.has(w)) return 'keyword';
      if (state.afterThen && ACTIONS.has(w)) return 'atom';
      if (SETTINGS.has(w) && stream.column() === stream.indentation()) return 'definitionKeyword';
      if (SERIES.has(w)) return 'variableName.special';
      if (UNITS.has(w)) return 'unit';
      if (stream.peek() === '(') return 'function';
      return 'variableName';
    }
    stream.next();
    return null;
  },
  tokenTable: { function: t.function(t.variableName), unit: t.unit },
  languageData: { commentTokens: { line: '#' } },
});

// Colours chosen for the app's dark background (#0d1117-ish) at WCAG AA contrast (4.5:1+).
const style = HighlightStyle.define([
  { tag: t.comment, color: '#9aa4b1', fontStyle: 'italic' },
  { tag: [t.keyword, t.definitionKeyword, t.controlKeyword, t.operatorKeyword], color: '#ff8f8f' },
  { tag: [t.number, t.bool, t.null, t.unit], color: '#79c0ff' },
  { tag: [t.string, t.special(t.string)], color: '#a5d6ff' },
  { tag: [t.atom, t.special(t.variableName)], color: '#ffa657' },
  { tag: [t.function(t.variableName), t.function(t.propertyName)], color: '#d2a8ff' },
  { tag: [t.className, t.definition(t.variableName)], color: '#7ee787' },
  { tag: t.operator, color: '#e6edf3' },
]);

const theme = EditorView.theme(
  {
    '&': { color: '#e6edf3', backgroundColor: '#0b0f14', fontSize: '14px', borderRadius: '6px' },
    '.cm-content': { fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace', caretColor: '#e6edf3' },
    '.cm-gutters': { backgroundColor: '#0b0f14', color: '#9aa4b1', border: 'none' },
    '.cm-activeLine': { backgroundColor: '#161b22' },
    '.cm-activeLineGutter': { backgroundColor: '#161b22', color: '#e6edf3' },
    '&.cm-focused': { outline: '2px solid #4c8dff' },
    '.cm-cursor': { borderLeftColor: '#e6edf3' },
    '&.cm-focused .cm-selectionBackground, .cm-selectionBackground, ::selection': { backgroundColor: '#264f78' },
    '.cm-lintRange-error': { backgroundImage: 'none', textDecoration: 'underline wavy #ff7b72' },
    '.cm-tooltip': { backgroundColor: '#161b22', color: '#e6edf3', border: '1px solid #30363d' },
  },
  { dark: true },
);

/**
 * An editor in `parent`. language: 'dsl' | 'python'. Returns the view plus helpers to read and
 * replace the text and to mark an error at line:column (1-based, as the API reports them).
 */
export function createEditor(parent, { doc = '', language = 'dsl', readOnly = false, label = 'Source', onChange } = {}) {
  const editable = new Compartment();
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc,
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightActiveLine(),
        drawSelection(),
        history(),
        indentOnInput(),
        bracketMatching(),
        language === 'python' ? python() : dsl,
        syntaxHighlighting(style),
        theme,
        lintGutter(),
        linter(null),
        // Tab indents; Esc then Tab leaves the editor (CodeMirror's focus-escape), so keyboard
        // users are never trapped.
        keymap.of([...defaultKeymap, ...historyKeymap, indentWithTab]),
        editable.of([EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)]),
        EditorView.contentAttributes.of({ 'aria-label': label }),
        EditorView.updateListener.of((update) => {
          if (update.docChanged && onChange) onChange(update.state.doc.toString());
        }),
      ],
    }),
  });
  return {
    view,
    getText: () => view.state.doc.toString(),
    setText(text) {
      view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
    },
    /** Underline the spot and put a marker in the gutter of `line`; scroll it into view. */
    showError(line, column, message) {
      const doc = view.state.doc;
      const ln = doc.line(Math.min(Math.max(1, line), doc.lines));
      const from = Math.min(ln.from + Math.max(0, column - 1), ln.to);
      const to = from < ln.to ? from + 1 : from;
      view.dispatch(setDiagnostics(view.state, [{ from, to, severity: 'error', message }]));
      view.dispatch({ selection: { anchor: from }, scrollIntoView: true });
    },
    clearErrors() {
      view.dispatch(setDiagnostics(view.state, []));
    },
    focus: () => view.focus(),
  };
}
