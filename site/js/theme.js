// The colour theme: follows the system, or the visitor's choice (stored in this browser only).

const ORDER = ["auto", "light", "dark"];
const KEY = "tokfeel-theme";

function stored() {
  try {
    const value = localStorage.getItem(KEY);
    return ORDER.includes(value) ? value : "auto";
  } catch {
    return "auto";
  }
}

function apply(theme, button) {
  if (theme === "auto") delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
  button.textContent = `Theme: ${theme}`;
  button.title = theme === "auto" ? "The colour theme follows the system; press to choose light or dark" : `Colour theme: ${theme}; press to change`;
  document.dispatchEvent(new CustomEvent("tokfeel:theme"));
}

/** Wire the toggle; the event "tokfeel:theme" fires on every change (and the system's). */
export function initTheme(button) {
  let theme = stored();
  apply(theme, button);
  button.addEventListener("click", () => {
    theme = ORDER[(ORDER.indexOf(theme) + 1) % ORDER.length];
    try {
      if (theme === "auto") localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, theme);
    } catch {
      // Not stored; it still applies to this page.
    }
    apply(theme, button);
  });
  window.matchMedia("(prefers-color-scheme: dark)").addEventListener("change", () => document.dispatchEvent(new CustomEvent("tokfeel:theme")));
}

/** Whether the page is dark now. */
export function isDark() {
  const chosen = document.documentElement.dataset.theme;
  if (chosen) return chosen === "dark";
  return window.matchMedia("(prefers-color-scheme: dark)").matches;
}
