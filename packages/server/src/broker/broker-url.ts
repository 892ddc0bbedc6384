// How an external broker's URL is shown: messages and logs name its host, never its login.

/** Host and port of an MQTT URL, without the credentials (for messages and logs). */
export const redact = (url: string): string => {
  const u = new URL(url);
  return `${u.protocol}//${u.host}`;
};
