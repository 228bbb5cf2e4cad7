// Offline use: once the engine has started here, a service worker (sw.js, written by the build
// with this build's file list and a cache named after their hashes) keeps the page, the Python
// runtime, the engine bundle and the chart library, so the next visit works without a network.
// It serves the versioned and content-addressed files from its cache and everything else from
// the network first, so a new deployment is picked up whole (build.py write_service_worker).

/** Register sw.js (at the site's root, so it controls the page); resolves with the registration,
 *  or null where service workers are unavailable (file://, private modes, some browsers). */
export async function enableOffline() {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return null;
  try {
    return await navigator.serviceWorker.register(new URL("sw.js", document.baseURI).href, { scope: "./" });
  } catch {
    return null; // the page works as before, only not offline
  }
}
