/**
 * Words the generated dataset is made of: names, topics and sentence templates in six
 * languages, so that search finds realistic content in several scripts and accents.
 */

export type Language = 'en' | 'ru' | 'de' | 'es' | 'fr' | 'zh'

export const LANGUAGES: readonly Language[] = ['en', 'ru', 'de', 'es', 'fr', 'zh']

export const FIRST_NAMES: Record<Language, readonly string[]> = {
  en: ['anna', 'john', 'mike', 'sarah', 'emily', 'david', 'chris', 'laura', 'kevin', 'nora'],
  ru: ['ivan', 'olga', 'dmitry', 'natasha', 'sergey', 'alyona', 'pavel', 'irina', 'maxim', 'vera'],
  de: ['lukas', 'lena', 'jonas', 'mia', 'felix', 'hannah', 'paul', 'clara', 'moritz', 'greta'],
  es: ['carlos', 'lucia', 'mateo', 'sofia', 'diego', 'valeria', 'pablo', 'elena', 'javier', 'carmen'],
  fr: ['louis', 'chloe', 'hugo', 'camille', 'jules', 'manon', 'arthur', 'ines', 'theo', 'lea'],
  zh: ['wei', 'fang', 'lei', 'jing', 'hao', 'xiu', 'ming', 'yan', 'jun', 'li'],
}

export const NAME_SUFFIXES: readonly string[] = ['', '_k', '.crypto', '88', '_free', 'writer', '_art', '2024', '_pkoin', 'x']

/**
 * Topics with a weight (how often posts are about them) and, per language, the words posts use.
 * The English keyword of a frequent topic ("bitcoin") appears in every language; rarer ones
 * ("music") keep their match count under a hundred, which the pagination tests rely on.
 */
export interface Topic {
  tag: string
  weight: number
  words: Record<Language, readonly string[]>
}

export const TOPICS: readonly Topic[] = [
  {
    tag: 'bitcoin',
    weight: 14,
    words: {
      en: ['bitcoin', 'halving', 'blockchain', 'wallet'],
      ru: ['bitcoin', 'биткоин', 'блокчейн', 'кошелёк'],
      de: ['bitcoin', 'Halving', 'Blockchain', 'Geldbörse'],
      es: ['bitcoin', 'cadena de bloques', 'billetera'],
      fr: ['bitcoin', 'chaîne de blocs', 'portefeuille'],
      zh: ['bitcoin', '比特币', '区块链', '钱包'],
    },
  },
  {
    tag: 'pocketnet',
    weight: 10,
    words: {
      en: ['Pocketnet', 'Bastyon', 'PKOIN', 'decentralized'],
      ru: ['Pocketnet', 'Бастион', 'PKOIN', 'децентрализация'],
      de: ['Pocketnet', 'Bastyon', 'PKOIN', 'dezentral'],
      es: ['Pocketnet', 'Bastyon', 'PKOIN', 'descentralizado'],
      fr: ['Pocketnet', 'Bastyon', 'PKOIN', 'décentralisé'],
      zh: ['Pocketnet', 'Bastyon', 'PKOIN', '去中心化'],
    },
  },
  {
    tag: 'coffee',
    weight: 6,
    words: {
      en: ['coffee', 'café', 'espresso'],
      ru: ['кофе', 'кофейня', 'эспрессо'],
      de: ['Kaffee', 'Café', 'Espresso'],
      es: ['café', 'cafetería', 'espresso'],
      fr: ['café', 'croissant', 'expresso'],
      zh: ['咖啡', '咖啡馆'],
    },
  },
  {
    tag: 'travel',
    weight: 8,
    words: {
      en: ['travel', 'mountains', 'journey', 'sunset'],
      ru: ['путешествие', 'горы', 'закат'],
      de: ['Reise', 'Berge', 'Sonnenuntergang'],
      es: ['viaje', 'montañas', 'atardecer'],
      fr: ['voyage', 'montagnes', 'coucher de soleil'],
      zh: ['旅行', '山', '日落'],
    },
  },
  {
    tag: 'music',
    weight: 3,
    words: {
      en: ['music', 'musician', 'musical'],
      ru: ['музыка', 'гитара', 'концерт'],
      de: ['Musik', 'Gitarre', 'Konzert'],
      es: ['música', 'guitarra', 'music'],
      fr: ['musique', 'guitare', 'music'],
      zh: ['音乐', '吉他', '音乐会'],
    },
  },
  {
    tag: 'freedom',
    weight: 7,
    words: {
      en: ['freedom', 'censorship', 'privacy', 'speech'],
      ru: ['свобода', 'цензура', 'приватность'],
      de: ['Freiheit', 'Zensur', 'Privatsphäre'],
      es: ['libertad', 'censura', 'privacidad'],
      fr: ['liberté', 'censure', 'vie privée'],
      zh: ['自由', '审查', '隐私'],
    },
  },
  {
    tag: 'cooking',
    weight: 5,
    words: {
      en: ['recipe', 'dinner', 'bread', 'soup'],
      ru: ['рецепт', 'ужин', 'хлеб', 'борщ'],
      de: ['Rezept', 'Abendessen', 'Brot', 'Suppe'],
      es: ['receta', 'cena', 'pan', 'paella'],
      fr: ['recette', 'dîner', 'pain', 'soupe'],
      zh: ['食谱', '晚餐', '面包', '汤'],
    },
  },
  {
    tag: 'greetings',
    weight: 4,
    words: {
      en: ['hello', 'friends', 'morning'],
      ru: ['привет', 'друзья', 'утро'],
      de: ['hallo', 'Freunde', 'Morgen'],
      es: ['hola', 'amigos', 'mañana'],
      fr: ['bonjour', 'amis', 'matin'],
      zh: ['你好', '朋友们', '早上'],
    },
  },
  {
    tag: 'science',
    weight: 5,
    words: {
      en: ['science', 'space', 'rocket', 'physics'],
      ru: ['наука', 'космос', 'ракета'],
      de: ['Wissenschaft', 'Weltraum', 'Rakete'],
      es: ['ciencia', 'espacio', 'cohete'],
      fr: ['science', 'espace', 'fusée'],
      zh: ['科学', '太空', '火箭'],
    },
  },
  {
    tag: 'photography',
    weight: 4,
    words: {
      en: ['photo', 'camera', 'portrait'],
      ru: ['фото', 'камера', 'портрет'],
      de: ['Foto', 'Kamera', 'Porträt'],
      es: ['foto', 'cámara', 'retrato'],
      fr: ['photo', 'appareil', 'portrait'],
      zh: ['照片', '相机', '肖像'],
    },
  },
]

/** Sentence templates; `{w}` is replaced by a topic word. */
export const TEMPLATES: Record<Language, { captions: readonly string[], sentences: readonly string[] }> = {
  en: {
    captions: ['Thoughts on {w}', 'Why {w} matters', 'My day with {w}', '{w}: a short story', 'Everything about {w}'],
    sentences: ['I have been thinking about {w} all week.', 'Here is what I learned about {w}.', 'Does anyone else love {w} as much as I do?', 'The best part of {w} is the people.', 'Share your own {w} stories below.'],
  },
  ru: {
    captions: ['Мысли о теме {w}', 'Почему {w} важно', 'Мой день: {w}', '{w} — короткая история'],
    sentences: ['Всю неделю думаю про {w}.', 'Вот что я узнал: {w}.', 'Кто ещё любит {w} так же, как я?', 'Лучшее в теме {w} — это люди.'],
  },
  de: {
    captions: ['Gedanken über {w}', 'Warum {w} wichtig ist', 'Mein Tag mit {w}', '{w}: eine kurze Geschichte'],
    sentences: ['Ich denke die ganze Woche an {w}.', 'Das habe ich über {w} gelernt.', 'Liebt noch jemand {w} so wie ich?', 'Das Beste an {w} sind die Menschen.'],
  },
  es: {
    captions: ['Pensamientos sobre {w}', 'Por qué importa {w}', 'Mi día con {w}', '{w}: una historia corta'],
    sentences: ['He pensado en {w} toda la semana.', 'Esto es lo que aprendí sobre {w}.', '¿Alguien más ama {w} como yo?', 'Lo mejor de {w} es la gente.'],
  },
  fr: {
    captions: ['Réflexions sur {w}', 'Pourquoi {w} compte', 'Ma journée avec {w}', '{w} : une courte histoire'],
    sentences: ["J'ai pensé à {w} toute la semaine.", "Voici ce que j'ai appris sur {w}.", "Quelqu'un d'autre aime {w} autant que moi ?", 'Le meilleur de {w}, ce sont les gens.'],
  },
  zh: {
    captions: ['关于{w}的想法', '为什么{w}很重要', '我和{w}的一天', '{w}：一个小故事'],
    sentences: ['这周我一直在想{w}。', '这是我对{w}的了解。', '还有人像我一样喜欢{w}吗？', '{w}最好的部分是人。'],
  },
}

export const ABOUT: Record<Language, string> = {
  en: 'Writing about what I love. Free speech on the blockchain.',
  ru: 'Пишу о том, что люблю. Свобода слова на блокчейне.',
  de: 'Ich schreibe über das, was ich liebe.',
  es: 'Escribo sobre lo que amo.',
  fr: "J'écris sur ce que j'aime.",
  zh: '写我喜欢的东西。',
}

/** Short comments per language; `{w}` is the first word of the post's caption. */
export const COMMENT_TEXTS: Record<Language, readonly string[]> = {
  en: ['Great post, thanks!', 'I totally agree.', 'Not sure about that, to be honest.', 'Where can I read more about {w}?', 'This made my day', 'Saved for later.', '+1'],
  ru: ['Отличный пост, спасибо!', 'Полностью согласен.', 'Не уверен, честно говоря.', 'Где почитать больше про {w}?', 'Сделал мой день', '+1'],
  de: ['Toller Beitrag, danke!', 'Stimme völlig zu.', 'Da bin ich mir nicht sicher.', 'Wo kann ich mehr über {w} lesen?', '+1'],
  es: ['¡Gran publicación, gracias!', 'Totalmente de acuerdo.', 'No estoy seguro, la verdad.', '¿Dónde puedo leer más sobre {w}?', '+1'],
  fr: ['Super post, merci !', "Tout à fait d'accord.", "Je n'en suis pas sûr, honnêtement.", 'Où lire plus sur {w} ?', '+1'],
  zh: ['好文章，谢谢！', '完全同意。', '说实话，我不太确定。', '哪里可以了解更多关于{w}的内容？', '+1'],
}
/** Replies to a comment, per language. */
export const ANSWER_TEXTS: Record<Language, readonly string[]> = {
  en: ['Thanks!', 'Good point.', 'I see it differently.', 'Exactly what I thought.'],
  ru: ['Спасибо!', 'Хорошая мысль.', 'Я вижу это иначе.', 'Именно так я и думал.'],
  de: ['Danke!', 'Guter Punkt.', 'Ich sehe das anders.', 'Genau das dachte ich.'],
  es: ['¡Gracias!', 'Buen punto.', 'Yo lo veo diferente.', 'Justo lo que pensaba.'],
  fr: ['Merci !', 'Bien vu.', 'Je vois les choses autrement.', "C'est exactement ce que je pensais."],
  zh: ['谢谢！', '说得好。', '我的看法不同。', '正是我所想的。'],
}
