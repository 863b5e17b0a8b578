// Swagger UI for /api/docs, on the document the app serves; no request leaves this origin.
window.addEventListener('load', function () {
  window.ui = window.SwaggerUIBundle({
    url: '/api/v1/openapi.json',
    dom_id: '#swagger-ui',
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    // Deep links put a link inside each operation's button, which no assistive technology can
    // reach on its own (axe: nested-interactive).
    deepLinking: false,
    // Tokens typed into Authorize stay in this page's memory only.
    persistAuthorization: false,
    tryItOutEnabled: false,
    // No badge from validator.swagger.io, no ?url= pointing the page at another document.
    validatorUrl: null,
    queryConfigEnabled: false,
    // Swagger UI wraps the servers' list in a label with no text: name it.
    onComplete: function () {
      var servers = document.getElementById('servers');
      if (servers) servers.setAttribute('aria-label', 'Servers');
      describeStructure();
      new MutationObserver(describeStructure).observe(document.getElementById('swagger-ui'), {
        childList: true,
        subtree: true,
      });
    },
  });
});

// Swagger UI heads its sections (each tag's operations, Webhooks, Schemas) h3, h2 and h4 under
// the title's h1, and an open operation's parts (Parameters, Responses, a response's Headers)
// h4 and h5: read as the title's sections, the sections are level 2, an operation's parts level
// 3 and what a response shows (its headers, its body) level 4. Its own main landmark holds the
// operations only: the title with the description, and the servers with Authorize, are named
// regions beside it, so a screen reader's landmarks reach everything on the page.
var HEADING_LEVELS = [
  ['.opblock-tag', '2'],
  ['.models > h4', '2'],
  ['.opblock-body h4', '3'],
  ['.opblock-body h4.headers__title', '4'],
  ['.opblock-body h5', '4'],
];
var REGIONS = [
  ['.information-container', 'About this API'],
  ['.schemes-server-container', 'Servers and authorization'],
];
function describeStructure() {
  HEADING_LEVELS.forEach(function (entry) {
    document.querySelectorAll(entry[0]).forEach(function (heading) {
      if (heading.getAttribute('aria-level') !== entry[1]) {
        heading.setAttribute('role', 'heading');
        heading.setAttribute('aria-level', entry[1]);
      }
    });
  });
  REGIONS.forEach(function (entry) {
    document.querySelectorAll(entry[0]).forEach(function (region) {
      if (region.getAttribute('role') !== 'region') {
        region.setAttribute('role', 'region');
        region.setAttribute('aria-label', entry[1]);
      }
    });
  });
}
