#!/bin/sh
# routeRequest: the route is the category classifyRequest wrote, printed
# as a JSON string.
category=$(sed -n 's/.*"category":"\([^"\\]*\)".*/\1/p')
printf '"%s"\n' "${category:-general}"
