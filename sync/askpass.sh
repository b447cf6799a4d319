#!/bin/sh
# GIT_ASKPASS for fetches with spec.secretRef (sync.credentials): answers git's
# "Username for ..." and "Password for ..." prompts from the fetching git
# process's environment; holds no secret itself.
case "$1" in
    Username*) printf '%s\n' "$KAPI_GIT_USERNAME" ;;
    *) printf '%s\n' "$KAPI_GIT_PASSWORD" ;;
esac
