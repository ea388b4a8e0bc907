#!/bin/sh
# solveBilling: two nodes name it. The first answers; the second, seeing
# an answer already there, adds that a second person checked it.
state=$(cat)
answer=$(printf '%s' "$state" | sed -n 's/.*"answer":"\([^"\\]*\)".*/\1/p')
if [ -z "$answer" ]; then
	echo '{"answer": "Your invoices are at /account/invoices; we will look at this charge today."}'
else
	printf '{"answer": "%s A second person checked this.", "checked": true}\n' "$answer"
fi
