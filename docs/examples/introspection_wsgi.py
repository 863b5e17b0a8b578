"""A service of the team that protects its routes with Tessera, Python's standard library only
(docs/introspection.md):
  TESSERA_URL=https://tessera.example.com TESSERA_TOKEN=tsr_... PORT=8080 python3 introspection_wsgi.py
"""
import json
import os
import re
import urllib.parse
import urllib.request
from wsgiref.simple_server import make_server


# The middleware: each request's bearer token checked by Tessera's introspection.
def tessera(app, url, token, abilities=""):
    def protected(environ, start_response):
        found = re.match(r"^Bearer (\S+)$", environ.get("HTTP_AUTHORIZATION", ""))
        body = urllib.parse.urlencode({"token": found[1] if found else "", "required_abilities": abilities})
        check = urllib.request.Request(f"{url}/api/v1/introspect", data=body.encode(),
                                       headers={"Authorization": f"Bearer {token}"})
        with urllib.request.urlopen(check, timeout=5) as answered:
            answer = json.load(answered)
        if answer.get("refusal") or not answer["active"]:
            refused = answer["refusal"]["code"] if answer.get("refusal") else "invalid_token"
            start_response("403 Forbidden" if answer.get("refusal") else "401 Unauthorized",
                           [("Content-Type", "application/json")])
            return [json.dumps({"error": refused}).encode()]
        environ["tessera"] = answer
        return app(environ, start_response)
    return protected


def invoices(environ, start_response):
    start_response("201 Created", [("Content-Type", "application/json")])
    return [json.dumps({"created_by": environ["tessera"]["user"]["name"]}).encode()]


if __name__ == "__main__":
    app = tessera(invoices, os.environ["TESSERA_URL"], os.environ["TESSERA_TOKEN"], "invoices:write")
    with make_server("127.0.0.1", int(os.environ.get("PORT", "8080")), app) as server:
        print(f"listening on {server.server_port}", flush=True)
        server.serve_forever()
