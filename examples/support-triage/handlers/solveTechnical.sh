#!/bin/sh
# solveTechnical: the first thing to try.
echo '{"answer": "Please update to the latest version and try again; if it still fails, send us the error."}'
