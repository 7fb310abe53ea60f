import baseConfig from '../../eslint.config.mjs';

/**
 * The console shows text that pages, stages and people wrote (log lines, page
 * dialogs, gate messages, envelopes). It is only ever put into the DOM as text
 * (textContent, text nodes; see src/dom/h.ts), so nothing it shows can run as
 * markup. These rules keep the HTML-parsing doors shut.
 */
const HTML_SINK = 'Put text into the DOM with textContent or h() (src/dom/h.ts); never parse it as HTML.';

export default [
  ...baseConfig,
  {
    files: ['src/**/*.ts'],
    ignores: ['src/**/*.spec.ts', 'src/**/*.int-spec.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { property: 'innerHTML', message: HTML_SINK },
        { property: 'outerHTML', message: HTML_SINK },
        { property: 'insertAdjacentHTML', message: HTML_SINK },
        { property: 'createContextualFragment', message: HTML_SINK },
        { property: 'srcdoc', message: HTML_SINK },
        { object: 'document', property: 'write', message: HTML_SINK },
        { object: 'document', property: 'writeln', message: HTML_SINK },
      ],
      'no-restricted-syntax': [
        'error',
        { selector: "NewExpression[callee.name='DOMParser']", message: HTML_SINK },
        { selector: "CallExpression[callee.name='eval']", message: 'No eval in the console.' },
        { selector: "NewExpression[callee.name='Function']", message: 'No eval in the console.' },
      ],
    },
  },
];
