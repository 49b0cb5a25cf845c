// A small English text, written for blockq, from which the synthetic models'
// tokenizers learn their merges so that ordinary words become few tokens.
#include "model/synth.hpp"

namespace blockq::model {

std::string_view synth_corpus() {
  return R"(The lighthouse keeper woke before the sun, as he did every morning of the year.
He made a pot of tea, opened the window and listened to the sea. The wind was from
the west, the water was calm, and the boats of the village were already on their way
out of the harbour. It is a quiet life, he would tell the children who came to visit,
but it is never the same from one day to the next.

In the summer there were many visitors. They came by train and by bus, they walked
along the cliffs, they took pictures of the old white tower and asked him how many
steps there were to the top. "One hundred and twelve," he said, "and I have counted
them every day for thirty years." Some of them did not believe him, so they counted
the steps themselves, and they always found that he was right.

In the winter the village was quiet. The shops closed early, the cafe by the water
opened only at the weekend, and the people who lived there all the year would meet in
the small library to read, to talk and to play cards. The library had three rooms: one
for books about the sea, one for books about the history of the town, and one for
everything else. The children liked the third room best, because it was full of
stories about dragons, ships, kings, queens and distant countries.

A young woman named Clara worked in the library. She had moved to the village from the
city two years before, because she wanted to live near the water and to have time to
write. She was writing a book about the lighthouse, and every week she visited the
keeper to ask him questions. What was the worst storm you have seen? When did the
light fail? Who kept the tower before you? He answered all of her questions with
patience, and sometimes he told her things she had not thought to ask.

"The light has never failed while I have been here," he told her one evening. "But in
1953 there was a storm so strong that the windows of the lamp room broke, and the
keeper at the time had to stand beside the lamp all night to keep it burning. His name
was Thomas. He was my teacher. He taught me that a light is only useful if it is there
when people need it, and people need it most when the weather is at its worst."

Clara wrote that down in her notebook. Then she asked him if he was ever lonely. He
thought about it for a long time before he answered. "No," he said at last. "I have the
sea, I have the birds, I have my books, and I have visitors like you. A person who
listens carefully is never really alone."

The next spring the town council decided that the lighthouse would be run by a machine.
A small computer would switch the light on at sunset and off at sunrise, and a sensor
would send a message to the harbour office if anything went wrong. The keeper was not
surprised. He had known for many years that this day would come. He packed his things
into four boxes, gave his plants to his neighbours and moved into a small house near the
library, where he could still see the tower from his kitchen window.

Clara finished her book in the autumn. It was called "The Keeper of the Light", and it
told the story of the tower, of the storms, of Thomas and of the man who had learned
from him. The people of the village bought many copies, and the book was read aloud in
the library on the first evening of winter. The old keeper sat in the front row. When
the reading was over, everyone turned to look at him, and he smiled and said only:
"It was a good light. It is still a good light. Remember to look at it sometimes."

Numbers and lists appear in every town. The harbour has 24 boats, 3 cafes and 1 market.
The market opens at 7:30 and closes at 13:00, from Monday to Saturday. Prices are simple:
bread costs 2.50, fish costs 12.00 per kilo, and a cup of coffee costs 1.80. In 2024 the
town counted 1,250 people, 430 houses and 96 children at the school.

Here is a short list of things to do in the village:
- walk along the cliffs to the lighthouse;
- visit the library and read about the history of the harbour;
- eat fresh fish at the market on Saturday morning;
- watch the boats come home in the evening.

Questions and answers are a good way to learn. What is your name? Where do you live?
How old are you? What do you like to do? I like to read, to write and to walk by the
sea. You should try it too; it is good for the mind and good for the heart. We can't
always choose the weather, but we can choose how we spend our time. They're sure that
it'll be sunny tomorrow, and we'll see if they are right. I've been wrong before, and
I'd like to be wrong again if it means a day of sunshine.
)";
}

}  // namespace blockq::model
