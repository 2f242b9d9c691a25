// Why mail to the account's address stopped (GET /v1/user/email: `suppressed`, `suppressed_reason`;
// docs/email.md "The suppression list"), in words. Used by the inbox's banner and the profile's
// e-mail card, where the address is changed.

const WHY = {
  unsubscribed: 'is turned off (you unsubscribed from all mail)',
  bounced: 'could not be delivered (the receiving mail server refused it)',
  complained: 'is stopped (a mail of ours was reported as spam)',
};

/** "Mail to ann@… could not be delivered (…)", or null when mail to it is not suppressed. */
export function suppressedMail(state) {
  if (!state.suppressed) return null;
  const why = WHY[state.suppressed_reason] || `is stopped (${state.suppressed_reason})`;
  return `Mail to ${state.email} ${why}`;
}
