// The panel's words. English is complete; another language may leave a key out and gets English there.
// `{0}` is replaced by the argument (a title, an address, a board name).

const en = {
  close: 'Close',
  ideas: 'Ideas',
  roadmap: 'Roadmap',
  news: "What's new",
  board: 'Board',
  loading: 'Loading…',
  empty: 'No ideas yet. Be the first!',
  failed: 'Could not load: {0}',
  more: 'Show more',
  voteFor: 'Vote for {0}',
  vote1: 'vote',
  votes: 'votes',
  open: 'Open {0}',
  newIn: 'New post in {0}',
  title: 'Title',
  details: 'Details',
  email: 'Email',
  submit: 'Submit',
  postingAs: 'Posting as {0}',
  notYou: 'Not you?',
  signIn: 'Sign in to post and vote.',
  needTitle: 'Give your idea a title.',
  needEmailVote: 'Enter your email address to vote.',
  needEmail: 'Enter your email address first.',
  thanks: 'Thanks! Your idea was posted.',
  held: 'Thanks! Your idea is awaiting review and appears once the team approves it.',
  voted: 'Voted for {0}.',
  unvoted: 'Vote removed from {0}.',
  confirm: 'Check your e-mail ({0}) to confirm your address. Until then your posts and votes count as unconfirmed.',
  unconfirmed: 'unconfirmed',
  claim: '{0} is already confirmed. We sent a link there: open it and we carry on here.',
  claimed: 'Address confirmed. Welcome back!',
  similar: 'Similar ideas: vote instead of posting a duplicate?',
  voteInstead: 'Vote instead',
  back: 'Back',
  comments: 'Comments',
  noComments: 'No comments yet.',
  team: 'Team',
  comment: 'Comment',
  send: 'Send comment',
  commented: 'Comment posted.',
  planned: 'Planned',
  in_progress: 'In progress',
  complete: 'Complete',
  nothing: 'Nothing here yet.',
  noNews: 'No updates yet.',
  tooMany: 'Too many requests; try again in a minute.',
  requestFailed: 'Request failed ({0})',
}

export type Words = typeof en

const de: Partial<Words> = {
  team: 'Team',
  close: 'Schließen', ideas: 'Ideen', roadmap: 'Roadmap', news: 'Neuigkeiten', board: 'Board', loading: 'Wird geladen…',
  empty: 'Noch keine Ideen. Sei die erste Person!', failed: 'Laden fehlgeschlagen: {0}', more: 'Mehr anzeigen', voteFor: 'Für {0} stimmen',
  vote1: 'Stimme', votes: 'Stimmen', open: '{0} öffnen', newIn: 'Neuer Beitrag in {0}', title: 'Titel', details: 'Details', email: 'E-Mail',
  submit: 'Absenden', postingAs: 'Du schreibst als {0}', notYou: 'Nicht du?', signIn: 'Melde dich an, um zu schreiben und abzustimmen.',
  needTitle: 'Gib deiner Idee einen Titel.', needEmailVote: 'Gib deine E-Mail-Adresse ein, um abzustimmen.', needEmail: 'Gib zuerst deine E-Mail-Adresse ein.',
  thanks: 'Danke! Deine Idee wurde veröffentlicht.', held: 'Danke! Deine Idee wartet auf Prüfung und erscheint, sobald das Team sie freigibt.', voted: 'Für {0} abgestimmt.', unvoted: 'Stimme für {0} zurückgezogen.',
  confirm: 'Bitte bestätige deine Adresse über die E-Mail an {0}. Bis dahin gelten deine Beiträge und Stimmen als unbestätigt.',
  unconfirmed: 'unbestätigt', claim: '{0} ist bereits bestätigt. Wir haben dir einen Link geschickt: öffne ihn, dann geht es hier weiter.',
  claimed: 'Adresse bestätigt. Willkommen zurück!', similar: 'Ähnliche Ideen: lieber abstimmen statt doppelt posten?', voteInstead: 'Stattdessen abstimmen', back: 'Zurück', comments: 'Kommentare', noComments: 'Noch keine Kommentare.', comment: 'Kommentar',
  send: 'Kommentar senden', commented: 'Kommentar veröffentlicht.', planned: 'Geplant', in_progress: 'In Arbeit', complete: 'Fertig',
  nothing: 'Hier ist noch nichts.', noNews: 'Noch keine Neuigkeiten.', tooMany: 'Zu viele Anfragen; versuche es in einer Minute erneut.', requestFailed: 'Anfrage fehlgeschlagen ({0})',
}

const fr: Partial<Words> = {
  team: 'Équipe',
  close: 'Fermer', ideas: 'Idées', roadmap: 'Feuille de route', news: 'Nouveautés', board: 'Tableau', loading: 'Chargement…',
  empty: 'Aucune idée pour l’instant. Soyez le premier !', failed: 'Échec du chargement : {0}', more: 'Voir plus', voteFor: 'Voter pour {0}',
  vote1: 'vote', votes: 'votes', open: 'Ouvrir {0}', newIn: 'Nouvelle idée dans {0}', title: 'Titre', details: 'Détails', email: 'E-mail',
  submit: 'Envoyer', postingAs: 'Vous publiez en tant que {0}', notYou: 'Ce n’est pas vous ?', signIn: 'Connectez-vous pour publier et voter.',
  needTitle: 'Donnez un titre à votre idée.', needEmailVote: 'Saisissez votre adresse e-mail pour voter.', needEmail: 'Saisissez d’abord votre adresse e-mail.',
  thanks: 'Merci ! Votre idée a été publiée.', held: 'Merci ! Votre idée est en attente de validation et apparaîtra une fois approuvée par l’équipe.', voted: 'Vote enregistré pour {0}.', unvoted: 'Vote retiré de {0}.',
  confirm: 'Confirmez votre adresse grâce à l’e-mail envoyé à {0}. D’ici là, vos idées et votes restent non confirmés.',
  unconfirmed: 'non confirmé', claim: '{0} est déjà confirmée. Nous y avons envoyé un lien : ouvrez-le et nous continuons ici.',
  claimed: 'Adresse confirmée. Bon retour !', similar: 'Idées similaires : voter plutôt que créer un doublon ?', voteInstead: 'Voter plutôt', back: 'Retour', comments: 'Commentaires', noComments: 'Pas encore de commentaire.', comment: 'Commentaire',
  send: 'Envoyer le commentaire', commented: 'Commentaire publié.', planned: 'Prévu', in_progress: 'En cours', complete: 'Terminé',
  nothing: 'Rien pour l’instant.', noNews: 'Pas encore de nouveautés.', tooMany: 'Trop de requêtes ; réessayez dans une minute.', requestFailed: 'La requête a échoué ({0})',
}

const es: Partial<Words> = {
  team: 'Equipo',
  close: 'Cerrar', ideas: 'Ideas', roadmap: 'Hoja de ruta', news: 'Novedades', board: 'Tablero', loading: 'Cargando…',
  empty: 'Aún no hay ideas. ¡Sé el primero!', failed: 'No se pudo cargar: {0}', more: 'Ver más', voteFor: 'Votar por {0}',
  vote1: 'voto', votes: 'votos', open: 'Abrir {0}', newIn: 'Nueva idea en {0}', title: 'Título', details: 'Detalles', email: 'Correo electrónico',
  submit: 'Enviar', postingAs: 'Publicas como {0}', notYou: '¿No eres tú?', signIn: 'Inicia sesión para publicar y votar.',
  needTitle: 'Ponle un título a tu idea.', needEmailVote: 'Escribe tu correo electrónico para votar.', needEmail: 'Escribe primero tu correo electrónico.',
  thanks: '¡Gracias! Tu idea se ha publicado.', held: '¡Gracias! Tu idea está pendiente de revisión y aparecerá cuando el equipo la apruebe.', voted: 'Has votado por {0}.', unvoted: 'Voto retirado de {0}.',
  confirm: 'Revisa tu correo ({0}) para confirmar tu dirección. Hasta entonces tus ideas y votos cuentan como no confirmados.',
  unconfirmed: 'sin confirmar', claim: '{0} ya está confirmada. Te enviamos un enlace: ábrelo y seguimos aquí.',
  claimed: 'Dirección confirmada. ¡Bienvenido de nuevo!', similar: 'Ideas parecidas: ¿votar en vez de duplicar?', voteInstead: 'Votar en su lugar', back: 'Volver', comments: 'Comentarios', noComments: 'Aún no hay comentarios.', comment: 'Comentario',
  send: 'Enviar comentario', commented: 'Comentario publicado.', planned: 'Planificado', in_progress: 'En curso', complete: 'Completado',
  nothing: 'Aún no hay nada.', noNews: 'Aún no hay novedades.', tooMany: 'Demasiadas solicitudes; inténtalo en un minuto.', requestFailed: 'La solicitud falló ({0})',
}

const ja: Partial<Words> = {
  team: 'チーム',
  close: '閉じる', ideas: 'アイデア', roadmap: 'ロードマップ', news: '新着情報', board: 'ボード', loading: '読み込み中…',
  empty: 'まだアイデアはありません。最初の投稿をどうぞ!', failed: '読み込めませんでした: {0}', more: 'さらに表示', voteFor: '{0} に投票',
  vote1: '票', votes: '票', open: '{0} を開く', newIn: '{0} に新規投稿', title: 'タイトル', details: '詳細', email: 'メールアドレス',
  submit: '送信', postingAs: '{0} として投稿中', notYou: '別の方ですか?', signIn: '投稿と投票にはサインインしてください。',
  needTitle: 'アイデアのタイトルを入力してください。', needEmailVote: '投票するにはメールアドレスを入力してください。', needEmail: '先にメールアドレスを入力してください。',
  thanks: 'ありがとうございます。アイデアを投稿しました。', held: 'ありがとうございます。アイデアは確認待ちです。チームが承認すると表示されます。', voted: '{0} に投票しました。', unvoted: '{0} への投票を取り消しました。',
  confirm: '{0} に届いたメールでアドレスを確認してください。確認までは投稿と投票は未確認として扱われます。',
  unconfirmed: '未確認', claim: '{0} は確認済みです。リンクを送信しました。開くとここで続行します。',
  claimed: 'アドレスを確認しました。おかえりなさい!', similar: '似たアイデア: 重複投稿の代わりに投票しますか?', voteInstead: '代わりに投票', back: '戻る', comments: 'コメント', noComments: 'まだコメントはありません。', comment: 'コメント',
  send: 'コメントを送信', commented: 'コメントを投稿しました。', planned: '予定', in_progress: '進行中', complete: '完了',
  nothing: 'まだ何もありません。', noNews: 'まだ新着情報はありません。', tooMany: 'リクエストが多すぎます。1 分後にお試しください。', requestFailed: 'リクエストに失敗しました ({0})',
}

const ar: Partial<Words> = {
  team: 'الفريق',
  close: 'إغلاق', ideas: 'الأفكار', roadmap: 'خارطة الطريق', news: 'ما الجديد', board: 'اللوحة', loading: 'جارٍ التحميل…',
  empty: 'لا توجد أفكار بعد. كن أول من يشارك!', failed: 'تعذّر التحميل: {0}', more: 'عرض المزيد', voteFor: 'صوّت لـ {0}',
  vote1: 'صوت', votes: 'أصوات', open: 'فتح {0}', newIn: 'منشور جديد في {0}', title: 'العنوان', details: 'التفاصيل', email: 'البريد الإلكتروني',
  submit: 'إرسال', postingAs: 'تنشر باسم {0}', notYou: 'لست أنت؟', signIn: 'سجّل الدخول للنشر والتصويت.',
  needTitle: 'أعطِ فكرتك عنوانًا.', needEmailVote: 'أدخل بريدك الإلكتروني للتصويت.', needEmail: 'أدخل بريدك الإلكتروني أولًا.',
  thanks: 'شكرًا! نُشرت فكرتك.', held: 'شكرًا! فكرتك بانتظار المراجعة وستظهر بعد موافقة الفريق.', voted: 'صوّتّ لـ {0}.', unvoted: 'أُزيل صوتك من {0}.',
  confirm: 'تحقق من بريدك ({0}) لتأكيد عنوانك. حتى ذلك الحين تُعدّ منشوراتك وأصواتك غير مؤكدة.',
  unconfirmed: 'غير مؤكد', claim: '{0} مؤكد مسبقًا. أرسلنا إليه رابطًا: افتحه وسنكمل هنا.',
  claimed: 'تم تأكيد العنوان. مرحبًا بعودتك!', similar: 'أفكار مشابهة: هل تصوّت بدلًا من التكرار؟', voteInstead: 'صوّت بدلًا من ذلك', back: 'رجوع', comments: 'التعليقات', noComments: 'لا توجد تعليقات بعد.', comment: 'تعليق',
  send: 'إرسال التعليق', commented: 'نُشر التعليق.', planned: 'مخطط', in_progress: 'قيد التنفيذ', complete: 'مكتمل',
  nothing: 'لا شيء هنا بعد.', noNews: 'لا تحديثات بعد.', tooMany: 'طلبات كثيرة جدًا؛ حاول بعد دقيقة.', requestFailed: 'فشل الطلب ({0})',
}

const he: Partial<Words> = {
  team: 'צוות',
  close: 'סגירה', ideas: 'רעיונות', roadmap: 'מפת דרכים', news: 'מה חדש', board: 'לוח', loading: 'טוען…',
  empty: 'אין עדיין רעיונות. היו הראשונים!', failed: 'הטעינה נכשלה: {0}', more: 'הצגת עוד', voteFor: 'הצבעה עבור {0}',
  vote1: 'קול', votes: 'קולות', open: 'פתיחת {0}', newIn: 'פוסט חדש ב{0}', title: 'כותרת', details: 'פרטים', email: 'דוא״ל',
  submit: 'שליחה', postingAs: 'מפרסמים בתור {0}', notYou: 'לא אתם?', signIn: 'יש להתחבר כדי לפרסם ולהצביע.',
  needTitle: 'תנו לרעיון כותרת.', needEmailVote: 'הזינו כתובת דוא״ל כדי להצביע.', needEmail: 'הזינו קודם כתובת דוא״ל.',
  thanks: 'תודה! הרעיון פורסם.', held: 'תודה! הרעיון ממתין לבדיקה ויופיע לאחר אישור הצוות.', voted: 'הצבעתם עבור {0}.', unvoted: 'ההצבעה עבור {0} בוטלה.',
  confirm: 'בדקו את הדוא״ל ({0}) כדי לאשר את הכתובת. עד אז הפוסטים וההצבעות שלכם אינם מאושרים.',
  unconfirmed: 'לא מאושר', claim: '{0} כבר מאושרת. שלחנו אליה קישור: פתחו אותו ונמשיך כאן.',
  claimed: 'הכתובת אושרה. ברוכים השבים!', similar: 'רעיונות דומים: להצביע במקום לפרסם כפילות?', voteInstead: 'הצבעה במקום', back: 'חזרה', comments: 'תגובות', noComments: 'אין עדיין תגובות.', comment: 'תגובה',
  send: 'שליחת תגובה', commented: 'התגובה פורסמה.', planned: 'מתוכנן', in_progress: 'בעבודה', complete: 'הושלם',
  nothing: 'אין כאן עדיין כלום.', noNews: 'אין עדיין עדכונים.', tooMany: 'יותר מדי בקשות; נסו שוב בעוד דקה.', requestFailed: 'הבקשה נכשלה ({0})',
}

export const LANGUAGES: Record<string, Partial<Words>> = { en, de, fr, es, ja, ar, he }
const RTL = ['ar', 'he', 'fa', 'ur']

/** The first of `data-locale` and the browser's languages that we have, by primary subtag; else English. */
export function pickLocale(wanted: (string | undefined)[]) {
  for (const tag of wanted) {
    const lang = tag?.toLowerCase().split(/[-_]/)[0]
    if (lang && LANGUAGES[lang]) return lang
  }
  return 'en'
}

export function translator(lang: string) {
  const words = { ...en, ...LANGUAGES[lang] }
  return {
    lang,
    dir: RTL.includes(lang) ? 'rtl' : 'ltr',
    t: (key: keyof Words, arg?: string) => words[key].replace('{0}', arg ?? ''),
  }
}
