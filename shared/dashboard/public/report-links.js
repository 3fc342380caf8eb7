// @ts-nocheck -- browser code, loaded as an ES module (no build); the server's type check does not apply.
// Adds a "Report" link to each campaign card of the dashboard's list (dashboard.js draws
// the cards; this only watches for new ones and links each to report.html?id=ID).
const list = document.querySelector('#campaigns');
if (list) {
  const link = () => {
    for (const card of list.querySelectorAll('article[data-campaign]')) {
      const title = card.querySelector('.title');
      if (!title || title.querySelector('.report-link')) continue;
      const a = document.createElement('a');
      a.className = 'report-link';
      a.href = `/report?id=${encodeURIComponent(/** @type {HTMLElement} */ (card).dataset.campaign ?? '')}`;
      a.textContent = 'Report';
      title.appendChild(a);
    }
  };
  new MutationObserver(link).observe(list, { childList: true, subtree: true });
  link();
}
