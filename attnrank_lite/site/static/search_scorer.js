// The site's search scores (Sphinx's html_search_scorer; set by attnrank_lite.site.sphinx_ext).
// Sphinx's defaults rank an API object whose name merely contains the query (rank_bracket for
// "rank": 6 + 5 = 11) above every page whose text contains it (5). Here a partial object-name match
// scores 3 + 1 = 4, below a page's text (5) and title (15); an object's exact name still scores
// 11 + 1 = 12, above a page's text.
var Scorer = {
  objNameMatch: 11,
  objPartialMatch: 3,
  objPrio: {
    0: 3,
    1: 1,
    2: -5,
  },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
};
