// The streamed answer as a chat app shows it: Markdown rendered while it arrives.
//
// marked (Markdown to HTML) and DOMPurify (sanitiser) are vendored from pinned npm packages by
// build.py into vendor/ and loaded as ES modules from the page's own origin; the sanitised
// result is inserted as DOM nodes, with no inline styles or scripts (the page's CSP forbids
// both). The text is split at its last blank line outside a code block: the blocks before it
// are rendered once and kept, only the last block is rendered again on each frame, so a
// 1,500-token answer costs the same per frame at its end as at its start. A block still being
// written is closed for display (an open **, ` or ``` is closed, a marker with nothing after
// it yet waits), so the reader never sees a literal ** or #.

let library = null;

/** Load marked and DOMPurify once; resolves with a render(text) -> DocumentFragment function. */
export function loadMarkdown(markedURL, purifyURL) {
  library ??= Promise.all([import(markedURL), import(purifyURL)]).then(([markedModule, purifyModule]) => {
    const marked = markedModule.marked;
    const purify = purifyModule.default;
    // Nothing in an answer needs a style attribute, an image or a form; the CSP would block
    // inline styles anyway.
    const options = { RETURN_DOM_FRAGMENT: true, FORBID_ATTR: ["style"], FORBID_TAGS: ["style", "img", "form", "input", "iframe"] };
    return (text) => purify.sanitize(marked.parse(text, { gfm: true, async: false }), options);
  });
  return library;
}

/** The render function once the libraries have loaded (by whoever asked first), else null. */
export function loadedMarkdown() {
  return library;
}

/** How many times `marker` occurs in `text`. */
function occurrences(text, marker) {
  return text.split(marker).length - 1;
}

/** A block still being written, made displayable: markers not yet followed by text are held
 *  back, and an open code fence, inline code span or bold run is closed. */
export function closeOpenMarkup(text) {
  let shown = text.replace(/(\*+|_+|`+|#+)$/, (marker, _m, offset) => (marker.startsWith("`") && occurrences(text.slice(0, offset), "```") % 2 ? marker : ""));
  if (occurrences(shown, "```") % 2) return `${shown}\n\`\`\``;
  if (occurrences(shown.replace(/``+/g, ""), "`") % 2) shown += "`";
  if (occurrences(shown, "**") % 2) shown += "**";
  return shown;
}

/** Where the settled blocks of `text` end: after its last blank line outside a code block. */
export function settledLength(text) {
  for (let at = text.lastIndexOf("\n\n"); at > 0; at = text.lastIndexOf("\n\n", at - 1)) {
    if (occurrences(text.slice(0, at), "```") % 2 === 0) return at + 2;
  }
  return 0;
}

/** Renders a growing text into `element`: settled blocks once, the last block every call. */
export class MarkdownView {
  constructor(element, render) {
    Object.assign(this, { element, render });
  }

  /** Start a new answer (empties the element). */
  reset() {
    this.settled = 0;
    this.done = document.createElement("div");
    this.tail = document.createElement("div");
    this.done.className = "md-settled";
    this.tail.className = "md-tail";
    this.element.replaceChildren(this.done, this.tail);
  }

  /** Show `text` (the whole answer so far); `final` renders the end without closing anything. */
  show(text, final = false) {
    const settled = final ? text.length : settledLength(text);
    if (settled > this.settled) {
      this.done.append(this.render(text.slice(this.settled, settled)));
      this.settled = settled;
    }
    const rest = text.slice(this.settled);
    this.tail.replaceChildren(rest ? this.render(final ? rest : closeOpenMarkup(rest)) : "");
  }
}
