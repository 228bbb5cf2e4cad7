// The URL glue: the view lives in the query string (state.js parses and writes it against the
// schema), a notice names the settings a link carried that were ignored, and Copy link shares it.

import { announce, setText } from "./dom.js";
import * as fmt from "./format.js";
import { parseState, serializeState } from "./state.js";

/** The link notice names at most this many ignored settings, then counts the rest. */
const NOTICE_ITEMS = 8;

/** The view in the address bar; `notice` shows what was ignored and why. */
export function readURL(schema, notice) {
  const parsed = parseState(location.search, schema);
  notice.hidden = !parsed.ignored.length;
  const items = parsed.ignored.slice(0, NOTICE_ITEMS).map((i) => `${i.key} (${i.reason})`);
  const more = parsed.ignored.length - items.length;
  if (more > 0) items.push(`and ${fmt.count(more)} more`);
  setText(notice, parsed.ignored.length ? `Ignored from the link: ${items.join(", ")}. Using defaults instead.` : "");
  return parsed.state;
}

/** Put `view` in the address bar without a history entry (defaults are left out). */
export function writeURL(view, schema) {
  const query = serializeState(view, schema);
  if (query !== location.search) history.replaceState(null, "", query || location.pathname);
}

/** The Copy link button: the address bar's URL to the clipboard, or say to copy it by hand. */
export function shareButton(button) {
  button.addEventListener("click", async () => {
    let copied = false;
    try {
      await navigator.clipboard.writeText(location.href);
      copied = true;
    } catch {
      copied = false;
    }
    button.textContent = copied ? "Link copied" : "Copy the address bar";
    button.dataset.copied = String(copied);
    announce(copied ? "The link to this view is on the clipboard." : "Copying is blocked here: copy the address from the address bar.");
    setTimeout(() => (button.textContent = "Copy link"), 2000);
  });
}
