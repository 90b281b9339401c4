// The site's search scores (Sphinx's html_search_scorer; set by attnrank_lite.site.sphinx_ext).
// Sphinx's defaults rank API objects above the chapters: an object named "rank" scores 11 + 5 = 16,
// one whose name contains "rank" (rank_bracket) 6 + 5 = 11, a page whose text contains the word 5.
// Here a chapter page (notebooks/) gets 10 more, so that every chapter containing the word
// (5 + 10 = 15) comes before an object of that exact name (11 + 1 = 12); a partial object-name
// match scores 3 + 1 = 4, below any page containing the word.
var Scorer = {
  score: (result) => {
    const [docname, title, anchor, descr, score, filename] = result;
    return docname.startsWith("notebooks/") ? score + 10 : score;
  },
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
