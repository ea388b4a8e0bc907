#!/bin/sh
# classifyRequest: sorts the request into technical, billing or general by
# its words, and writes the category.
request=$(sed -n 's/.*"request":"\([^"\\]*\)".*/\1/p' | tr '[:upper:]' '[:lower:]')
case "$request" in
*invoice*|*charge*|*refund*|*bill*|*paid*) category=billing ;;
*error*|*crash*|*bug*|*install*|*login*) category=technical ;;
*) category=general ;;
esac
printf '{"category": "%s"}\n' "$category"
