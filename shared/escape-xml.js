// Text inside XML: the SNS emulator's Query-protocol answers and the SVG charts of the
// simulator and the demo.

// XML 1.0 cannot carry most control characters even escaped; they become U+FFFD.
/** @type {Record<string, string>} */
const XML_ENTITIES = { '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' };

/**
 * Makes text safe inside an XML element or a quoted attribute.
 * @param {string} text
 */
export function escapeXml(text) {
  return text.replace(/[<>&"'\u0000-\u0008\u000b\u000c\u000e-\u001f]/g, (c) => XML_ENTITIES[c] ?? '\ufffd');
}
