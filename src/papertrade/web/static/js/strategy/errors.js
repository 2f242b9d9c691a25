// The service's answers as the strategy pages show them. api.js already turns request-shape
// errors ("field: <validator text>") into sentences and domain errors are written for people,
// so an error's message is what is said.

/** A sentence for an ApiError (or anything thrown). */
export function plainError(error) {
  return String(error?.message || error || 'Something went wrong.');
}
