// A user's own model, unrelated to the plant: authors and their books (a collection navigation by foreign key), and
// each book's reviews (a contained collection numbered per book). What docs/embedding.md shows a user writing.
import {
  defineEntityType,
  defineModel,
  type EntityTypeDefinition,
  type Row,
  type RowOfDefinition,
} from '../../src/model/schema.js';
import type { FunctionHandler, ODataServiceOptions } from '../../src/service/service.js';
import { collectionsOf } from '../../src/service/store.js';
import { parseQuery } from '../../src/syntax/query-string.js';
import { validateQuery } from '../../src/validate/bind.js';

export const Review = defineEntityType({
  name: 'Review',
  key: ['ReviewID'],
  properties: {
    ISBN: { type: 'Edm.String', maxLength: 17, nullable: false },
    ReviewID: { type: 'Edm.Int32', default: { generate: 'nextLineNumber' } },
    Stars: { type: 'Edm.Int32', nullable: false, minimum: 1, maximum: 5 },
    Text: { type: 'Edm.String', maxLength: 2000 },
  },
});

const bookDefinition = {
  name: 'Book',
  key: ['ISBN'],
  properties: {
    ISBN: { type: 'Edm.String', maxLength: 17 },
    Title: { type: 'Edm.String', maxLength: 200, nullable: false },
    AuthorID: { type: 'Edm.Int32', nullable: false },
    Price: { type: 'Edm.Decimal', precision: 9, scale: 2 },
    Published: { type: 'Edm.Date' },
    Updated: { type: 'Edm.DateTimeOffset', computed: true, managed: 'modified' },
  },
  navigation: {
    Reviews: { target: () => Review, foreignKey: { ISBN: 'ISBN' }, contained: true },
    Author: { target: () => Author, foreignKey: { AuthorID: 'AuthorID' }, collection: false },
    Editions: { target: () => Edition, foreignKey: { ISBN: 'ISBN' } },
  },
} as const satisfies EntityTypeDefinition;
export const Book = defineEntityType(bookDefinition);
/** A book's row as handlers receive it, inferred from its definition. */
export type BookRow = RowOfDefinition<typeof bookDefinition>;

/** A printing of a book: a composite key, and a single-valued navigation back to its book. */
export const Edition = defineEntityType({
  name: 'Edition',
  key: ['ISBN', 'Number'],
  properties: {
    ISBN: { type: 'Edm.String', maxLength: 17 },
    Number: { type: 'Edm.Int32' },
    Year: { type: 'Edm.Int32', nullable: false },
  },
  navigation: { Book: { target: () => Book, foreignKey: { ISBN: 'ISBN' }, collection: false } },
});

export const Author = defineEntityType({
  name: 'Author',
  key: ['AuthorID'],
  properties: {
    AuthorID: { type: 'Edm.Int32' },
    Name: { type: 'Edm.String', maxLength: 100, nullable: false },
  },
  navigation: { Books: { target: () => Book, foreignKey: { AuthorID: 'AuthorID' } } },
});

export const libraryModel = defineModel({
  namespace: 'Library',
  entitySets: {
    Authors: Author,
    Books: { type: Book, insertable: true, updatable: true, deletable: true },
    Editions: { type: Edition, insertable: true },
  },
  functions: [
    // the average of a book's stars (null without reviews)
    { name: 'Rating', boundTo: 'Books', parameters: {}, returnType: 'Edm.Decimal' },
    // how many books cost less than Price
    {
      name: 'BooksBelow',
      parameters: { Price: { type: 'Edm.Decimal', nullable: false, precision: 9, scale: 2 } },
      returnType: 'Edm.Int32',
    },
  ],
  actions: [
    // every price changed by Percent (rounded to cents); answers how many books have a price
    {
      name: 'Reprice',
      parameters: { Percent: { type: 'Edm.Int32', nullable: false, minimum: -50, maximum: 100 } },
      returnType: 'Edm.Int32',
    },
  ],
});

/** The operations' handlers: what a user writes beside the model. */
export const libraryOperations: Pick<ODataServiceOptions, 'functions' | 'actionImports'> = {
  functions: {
    Rating: (async ({ store, entity }) => {
      const reviews = collectionsOf(libraryModel).get('Review')!;
      // typed: entity.ISBN is a string, entity.Price a string, number or null
      const isbn: string = entity!.ISBN;
      const rows = await store.transaction((tx) => tx.children(reviews, { ISBN: isbn }));
      if (rows.length === 0) return null;
      return (rows.reduce((sum, row) => sum + Number(row['Stars']), 0) / rows.length).toFixed(2);
    }) satisfies FunctionHandler<undefined, BookRow>,
    BooksBelow: ({ store, parameters }) =>
      store.count(
        collectionsOf(libraryModel).get('Books')!,
        validateQuery(parseQuery(`$filter=Price lt ${String(parameters['Price'])}`), Book),
      ),
  },
  actionImports: {
    Reprice: async ({ tx, parameters }) => {
      const books = collectionsOf(libraryModel).get('Books')!;
      let repriced = 0;
      for (const book of await tx.children(books, {})) {
        if (book['Price'] === null) continue;
        const cents = Math.round(Number(book['Price']) * (100 + Number(parameters['Percent'])));
        await tx.update(books, { ...book, Price: (cents / 100).toFixed(2) });
        repriced++;
      }
      return repriced;
    },
  },
};

/** The rows every store starts with, by collection. */
export function libraryRows(): Record<string, Row[]> {
  const updated = '2026-01-02T03:04:05.000Z';
  return {
    Authors: [
      { AuthorID: 1, Name: 'Ursula K. Le Guin' },
      { AuthorID: 2, Name: 'Stanisław Lem' },
    ],
    Books: [
      {
        ISBN: '978-0441478125',
        Title: 'The Left Hand of Darkness',
        AuthorID: 1,
        Price: '9.99',
        Published: '1969-03-01',
        Updated: updated,
      },
      {
        ISBN: '978-0547773742',
        Title: 'A Wizard of Earthsea',
        AuthorID: 1,
        Price: '8.50',
        Published: '1968-11-01',
        Updated: updated,
      },
      {
        ISBN: '978-0156027601',
        Title: 'Solaris',
        AuthorID: 2,
        Price: '14.95',
        Published: '1961-06-01',
        Updated: updated,
      },
      { ISBN: '978-0156836715', Title: 'The Cyberiad', AuthorID: 2, Price: null, Published: null, Updated: updated },
    ],
    Editions: [
      { ISBN: '978-0156027601', Number: 1, Year: 1970 },
      { ISBN: '978-0156027601', Number: 2, Year: 2002 },
      { ISBN: '978-0441478125', Number: 1, Year: 1969 },
    ],
    Review: [
      { ISBN: '978-0156027601', ReviewID: 1, Stars: 5, Text: 'The ocean thinks.' },
      { ISBN: '978-0156027601', ReviewID: 2, Stars: 4, Text: null },
      { ISBN: '978-0441478125', ReviewID: 1, Stars: 5, Text: "Winter's king" },
    ],
  };
}
