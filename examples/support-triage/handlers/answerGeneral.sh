#!/bin/sh
# answerGeneral: anything else.
echo '{"answer": "Thank you for writing; a person will answer within a day."}'
