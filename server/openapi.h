// The OpenAPI 3 description of the REST API: server/openapi.json, compiled in at build time and
// served at GET /api/openapi.json. http_openapi_test checks it against the router both ways.
#pragma once

#include <string_view>

namespace colltune {

std::string_view openapi_text();

}  // namespace colltune
