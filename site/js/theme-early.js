// Applied before the first paint (a classic script in <head>), so a chosen theme never flashes:
// the stored choice ("light" or "dark") becomes <html data-theme>; none follows the system.
try {
  const theme = localStorage.getItem("tokfeel-theme");
  if (theme === "light" || theme === "dark") document.documentElement.dataset.theme = theme;
} catch {
  // Storage can be blocked; the system's preference then applies.
}
