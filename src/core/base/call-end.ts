/**
 * Why a call's signal aborted when its caller has gone (its connection closed): nobody will read
 * an answer, so a call may skip the work of one (a wait's last screen). A cancel
 * (`$/cancelRequest`, `notifications/cancelled`) aborts with another reason: its call still answers.
 */
export const CALLER_GONE: unique symbol = Symbol('the caller went away');
