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
    },
  });
});
