/**
 * Labels in English and Chinese from the same catalogue as the advisor
 * (`profinsight/i18n/messages.py`, keys starting with `ui.`), served by `GET api/messages`.
 * The language is the user's last choice, else the browser's.
 */

export type Lang = 'en' | 'zh';

/** Where a catalogue comes from (the API's `messages` call): kept structural, so this module
 * sits below the API module. */
export interface MessageSource {
  messages(lang: string): Promise<{ messages: Record<string, string> }>;
}
const STORE_KEY = 'profinsight.lang';

export function defaultLang(): Lang {
  try {
    const saved = window.localStorage.getItem(STORE_KEY);
    if (saved === 'en' || saved === 'zh') {
      return saved;
    }
  } catch {
    /* storage can be disabled */
  }
  const nav = (navigator.languages && navigator.languages[0]) || navigator.language || 'en';
  return nav.toLowerCase().startsWith('zh') ? 'zh' : 'en';
}

export function saveLang(lang: Lang): void {
  try {
    window.localStorage.setItem(STORE_KEY, lang);
  } catch {
    /* ignore */
  }
}

/** A loaded catalogue: `t('ui.view.operators')`, with `{name}` placeholders filled from `vars`. */
export class Messages {
  constructor(
    readonly lang: Lang,
    private readonly table: Record<string, string>
  ) {}

  static async load(api: MessageSource, lang: Lang): Promise<Messages> {
    const r = await api.messages(lang);
    return new Messages(lang, r.messages);
  }

  has(key: string): boolean {
    return key in this.table;
  }

  t = (key: string, vars: Record<string, string | number> = {}): string => {
    const text = this.table[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (m, k) => (k in vars ? String(vars[k]) : m));
  };
}
