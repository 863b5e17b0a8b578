// Swagger UI for /api/docs, on the document the app serves; no request leaves this origin.
window.addEventListener('load', function () {
  window.ui = window.SwaggerUIBundle({
    url: '/api/v1/openapi.json',
    dom_id: '#swagger-ui',
    presets: [window.SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    deepLinking: true,
    // Tokens typed into Authorize stay in this page's memory only.
    persistAuthorization: false,
    tryItOutEnabled: false,
    // No badge from validator.swagger.io, no ?url= pointing the page at another document.
    validatorUrl: null,
    queryConfigEnabled: false,
  });
});
