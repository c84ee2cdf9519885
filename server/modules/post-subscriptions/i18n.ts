// The words of post-update e-mail, in the widget's seven languages (widget/src/i18n.ts). `{0}`, `{1}` are
// replaced by the arguments. A status keeps the name the workspace gave it: it is theirs, not ours.

const en = {
  subjectOne: 'Update on “{0}”',
  subjectMany: '{0} updates on posts you follow',
  intro: 'News from {0} about what you asked for:',
  status: 'Status: {0} → {1}',
  reply: '{0} replied:',
  merged: '“{0}” was merged into “{1}”. You now follow “{1}”, and your vote counts there.',
  view: 'View the post',
  team: 'Team',
  why: 'You get this because you wrote, voted for or commented on this post.',
  stopPost: 'Stop e-mail about this post',
  stopAll: 'Stop all e-mail from {0}',
}
export type MailWords = typeof en

const de: MailWords = {
  subjectOne: 'Neuigkeiten zu „{0}“',
  subjectMany: '{0} Neuigkeiten zu Beiträgen, denen du folgst',
  intro: 'Neues von {0} zu deinem Anliegen:',
  status: 'Status: {0} → {1}',
  reply: '{0} hat geantwortet:',
  merged: '„{0}“ wurde mit „{1}“ zusammengeführt. Du folgst jetzt „{1}“, und deine Stimme zählt dort.',
  view: 'Beitrag ansehen',
  team: 'Team',
  why: 'Du bekommst diese E-Mail, weil du diesen Beitrag geschrieben, unterstützt oder kommentiert hast.',
  stopPost: 'Keine E-Mails mehr zu diesem Beitrag',
  stopAll: 'Keine E-Mails mehr von {0}',
}

const fr: MailWords = {
  subjectOne: 'Du nouveau sur « {0} »',
  subjectMany: '{0} nouvelles des idées que vous suivez',
  intro: 'Des nouvelles de {0} sur ce que vous avez demandé :',
  status: 'Statut : {0} → {1}',
  reply: '{0} a répondu :',
  merged: '« {0} » a été fusionnée avec « {1} ». Vous suivez désormais « {1} », et votre vote y compte.',
  view: 'Voir l’idée',
  team: 'Équipe',
  why: 'Vous recevez cet e-mail parce que vous avez écrit, soutenu ou commenté cette idée.',
  stopPost: 'Ne plus recevoir d’e-mail sur cette idée',
  stopAll: 'Ne plus recevoir d’e-mail de {0}',
}

const es: MailWords = {
  subjectOne: 'Novedades sobre «{0}»',
  subjectMany: '{0} novedades de ideas que sigues',
  intro: 'Novedades de {0} sobre lo que pediste:',
  status: 'Estado: {0} → {1}',
  reply: '{0} respondió:',
  merged: '«{0}» se fusionó con «{1}». Ahora sigues «{1}», y tu voto cuenta allí.',
  view: 'Ver la idea',
  team: 'Equipo',
  why: 'Recibes este correo porque escribiste, votaste o comentaste esta idea.',
  stopPost: 'No recibir más correos sobre esta idea',
  stopAll: 'No recibir más correos de {0}',
}

const ja: MailWords = {
  subjectOne: '「{0}」の更新',
  subjectMany: 'フォロー中の投稿に {0} 件の更新',
  intro: '{0} から、ご要望についてのお知らせです:',
  status: 'ステータス: {0} → {1}',
  reply: '{0} が返信しました:',
  merged: '「{0}」は「{1}」に統合されました。今後は「{1}」をフォローし、あなたの投票もそちらに数えられます。',
  view: '投稿を見る',
  team: 'チーム',
  why: 'この投稿を作成、投票、またはコメントしたため、このメールをお送りしています。',
  stopPost: 'この投稿に関するメールを停止',
  stopAll: '{0} からのメールをすべて停止',
}

const ar: MailWords = {
  subjectOne: 'تحديث بشأن «{0}»',
  subjectMany: '{0} تحديثات على منشورات تتابعها',
  intro: 'أخبار من {0} حول ما طلبته:',
  status: 'الحالة: {0} ← {1}',
  reply: 'ردّ {0}:',
  merged: 'دُمج «{0}» في «{1}». أنت تتابع «{1}» الآن، وصوتك يُحتسب هناك.',
  view: 'عرض المنشور',
  team: 'الفريق',
  why: 'تصلك هذه الرسالة لأنك كتبت هذا المنشور أو صوّتّ له أو علّقت عليه.',
  stopPost: 'إيقاف الرسائل حول هذا المنشور',
  stopAll: 'إيقاف كل الرسائل من {0}',
}

const he: MailWords = {
  subjectOne: 'עדכון על „{0}”',
  subjectMany: '{0} עדכונים על פוסטים שאתם עוקבים אחריהם',
  intro: 'חדשות מ{0} על מה שביקשתם:',
  status: 'סטטוס: {0} ← {1}',
  reply: '{0} הגיבו:',
  merged: '„{0}” מוזג לתוך „{1}”. מעכשיו אתם עוקבים אחרי „{1}”, וההצבעה שלכם נספרת שם.',
  view: 'צפייה בפוסט',
  team: 'צוות',
  why: 'קיבלתם הודעה זו כי כתבתם, הצבעתם או הגבתם על הפוסט הזה.',
  stopPost: 'הפסקת הודעות על הפוסט הזה',
  stopAll: 'הפסקת כל ההודעות מ{0}',
}

const WORDS: Record<string, MailWords> = { en, de, fr, es, ja, ar, he }
/** The languages e-mail is written in; the public writes accept these as `locale`. */
export const MAIL_LOCALES = Object.keys(WORDS) as ['en', 'de', 'fr', 'es', 'ja', 'ar', 'he']
const RTL = new Set(['ar', 'he'])

/** The nearest supported language of a stored locale (`de-AT` → `de`), English otherwise. */
export function mailLocale(locale: string | null | undefined): string {
  const base = locale?.toLowerCase().split(/[-_]/)[0] ?? 'en'
  return base in WORDS ? base : 'en'
}

export function mailTranslator(locale: string | null | undefined) {
  const lang = mailLocale(locale)
  const words = WORDS[lang]!
  return {
    lang,
    dir: RTL.has(lang) ? 'rtl' : 'ltr',
    t: (key: keyof MailWords, ...args: (string | number)[]) => words[key].replace(/\{(\d)\}/g, (_, index: string) => String(args[Number(index)] ?? '')),
  }
}
